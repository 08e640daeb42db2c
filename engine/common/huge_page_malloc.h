#pragma once

namespace emberline::engine {

// A large profile lives in arrays of hundreds of megabytes (stacks, sample columns, call-tree nodes, hash maps),
// filled once and read at random. Backed by 4 KiB pages, filling them is mostly page faults, and reading them is
// mostly TLB misses: opening a 1,000,000-sample profile took a third less time with transparent huge pages. The
// kernel gives huge pages to memory that asks for them (THP's usual "madvise" mode), and glibc's malloc asks when
// its tunable glibc.malloc.hugetlb=1 is set, which it reads only as the program starts. So Emberline starts itself
// once more with the tunable added to GLIBC_TUNABLES, and the second start puts the user's GLIBC_TUNABLES back, so
// that the programs it launches (a profiled target, perf script) get the environment they were given.
//
// Nothing changes when the user's GLIBC_TUNABLES already names the tunable, when EMBERLINE_HUGE_PAGES=0, when the
// kernel has THP off ("never"), or when the restart fails. Call first thing in main(), before any thread starts.
void useHugePageMalloc(char **argv);

// Starts `program` (an Emberline program, which calls useHugePageMalloc first thing) in place of the caller with the
// tunable added, as useHugePageMalloc starts the caller again: `program` then starts once, not twice. Returns, with
// the environment as it was, where useHugePageMalloc changes nothing or the start failed.
void execWithHugePageMalloc(const char *program, char **argv);

} // namespace emberline::engine
