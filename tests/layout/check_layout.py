#!/usr/bin/env python3
"""The tree's layout rules, checked on every test run (ctest: layout_rules).

- The include graph between source folders (engine/*, ui/*, app/*) has no loops: a folder that includes another
  folder's header depends on it, and no folder depends on itself through others.
- engine/ includes nothing of ui/ or app/, and ui/ nothing of app/ (the engine links Qt Core only).
- No source folder holds more than 25 source files; no source file (anywhere in the tree) is over 600 lines.

Usage: check_layout.py [SOURCE_DIR]   (default: the repository this file is in). Exits 1 with every breach listed.
"""
import os
import re
import sys

MAX_FILES_PER_FOLDER = 25
MAX_LINES_PER_FILE = 600
SOURCE_ROOTS = ("engine", "ui", "app")
SOURCE_EXTENSIONS = (".cpp", ".h", ".c")
SKIP_DIRS = {".git", "build", "node_modules"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
LAYERS = {"engine": 0, "ui": 1, "app": 2}  # a root may include its own and lower layers only


def source_files(root, top):
    for folder, dirs, files in os.walk(os.path.join(root, top)):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith(SOURCE_EXTENSIONS):
                yield os.path.relpath(os.path.join(folder, name), root)


def folder_graph(root, problems):
    edges = {}    # folder -> {folder it includes from}
    example = {}  # (folder, folder) -> "file includes header"
    for top in SOURCE_ROOTS:
        for path in source_files(root, top):
            folder = os.path.dirname(path)
            edges.setdefault(folder, set())
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                for line in f:
                    m = INCLUDE.match(line)
                    if not m or "/" not in m.group(1):
                        continue
                    header = m.group(1)
                    target = os.path.dirname(header)
                    target_top = target.split("/")[0]
                    if target_top not in SOURCE_ROOTS or target == folder:
                        continue
                    if LAYERS[target_top] > LAYERS[top]:
                        problems.append(f"{path} includes {header}: {top}/ may not depend on {target_top}/")
                    edges[folder].add(target)
                    example.setdefault((folder, target), f"{path} includes {header}")
    return edges, example


def loops(edges):
    """Strongly connected components of more than one folder (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    problems = []
    edges, example = folder_graph(root, problems)
    for component in loops(edges):
        members = set(component)
        steps = [example[(a, b)] for a in component for b in sorted(edges[a]) if b in members]
        problems.append("folders that include each other in a loop: " + ", ".join(component) + "\n    " +
                        "\n    ".join(steps))
    counts = {}
    for top in SOURCE_ROOTS:
        for path in source_files(root, top):
            counts[os.path.dirname(path)] = counts.get(os.path.dirname(path), 0) + 1
    for folder, count in sorted(counts.items()):
        if count > MAX_FILES_PER_FOLDER:
            problems.append(f"{folder}/ holds {count} source files (at most {MAX_FILES_PER_FOLDER}): split it by idea")
    for top in sorted(os.listdir(root)):
        if top in SKIP_DIRS or top.startswith("build") or not os.path.isdir(os.path.join(root, top)):
            continue
        for path in source_files(root, top):
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                lines = sum(1 for _ in f)
            if lines > MAX_LINES_PER_FILE:
                problems.append(f"{path} has {lines} lines (at most {MAX_LINES_PER_FILE}): split it")
    folders = len(edges)
    dependencies = sum(len(v) for v in edges.values())
    if problems:
        print("\n".join(problems))
        print(f"layout: {len(problems)} problem(s) in {folders} folders")
        return 1
    print(f"layout: {folders} folders, {dependencies} dependencies between them, no loops; "
          f"at most {max(counts.values())} source files a folder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
