#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

// The line tables of a module's compilation units, kept between sessions. Naming an address's file and line makes
// libdw decode the whole line program of its unit the first time a session meets the unit (and sort its rows): about
// 230 ns a row, 105 ms for the units of CPython's libpython built with -g, most of the cost of naming a Python
// program's interpreter frames. What the decoding gives for each address is the same from one session to the next as
// long as the file the DWARF is read from is, so a unit decoded once is kept, as the answer each address range gets
// within it: the row libdwfl's dwfl_module_getsrc picks (the last row at or before the address, none after a
// sequence's end), and the unit's file names for the call sites of its inlined code. The unit an address belongs to
// is still libdwfl's choice (by .debug_aranges, a lookup that decodes nothing): a unit's line table may hold
// sequences of code the linker discarded, placed over other units' code.
//
// One file per module, `<build id>.lines`, under $XDG_CACHE_HOME/emberline/line-tables (or
// ~/.cache/emberline/line-tables). It starts with a key: the store's version, and the path, size, modification time
// and inode of the file the DWARF came from. A file whose key differs (a debug file installed, rebuilt or removed
// since), or whose front (key, file names, the units' directory) does not read back whole and well formed (its checksum
// included), is not used, and the session's units replace it. A unit's table is read from the file when the session
// first asks for it (a session meets a few hundred of libpython's thousands of units: reading and checking the whole
// file, 5 to 7 MB, was most of a short session's symbolization), with a checksum of its own: a unit that does not
// read back whole and well formed is decoded by libdw again, and the file rewritten. Files are written under a
// temporary name and renamed, never changed in place; the folder is a cache: removing it loses only time.
//
// Thread: belongs to its Symbolizer (the exporter thread).
class LineTableStore {
public:
    struct Location {
        const std::string *file = nullptr; // owned by the store
        int line = 0;
        int column = 0;
    };

    // The folder the tables are kept in; "" when there is none to use (no $HOME, EMBERLINE_SYMBOL_CACHE=off).
    static std::string defaultDirectory();

    // Reads back what was kept for `buildId` under `key` (nothing when `directory` is "").
    LineTableStore(const std::string &directory, const std::string &buildId, std::string key);
    ~LineTableStore();
    LineTableStore(const LineTableStore &) = delete;
    LineTableStore &operator=(const LineTableStore &) = delete;

    // The line for `address` (the DWARF's own address) in the unit at `unitOffset` (its DIE's offset; the unit
    // libdwfl places the address in), when that unit is kept and its table gives the address a line; nullopt
    // otherwise (ask libdw).
    std::optional<Location> find(Dwarf_Off unitOffset, Dwarf_Addr address) const;
    // The file names of the unit at `unitOffset`, indexed as DW_AT_call_file; null when not kept.
    const std::vector<const std::string *> *unitFiles(Dwarf_Off unitOffset) const;
    // Keeps the unit `cu`, whose line table libdw has just decoded; nothing when it is kept already.
    void addUnit(Dwarf_Die *cu);
    // Units read back from the file (those the session asked for), and added since.
    size_t unitsReadBack() const { return m_unitsReadBack; }
    size_t unitsAdded() const { return m_unitsAdded; }
    // Writes the units when some were added since the file was read or last written; false when that failed.
    bool save();

private:
    static constexpr uint32_t kNone = 0xffffffffu;
    struct Entry {
        Dwarf_Addr low = 0;    // the answer holds from here to the next entry's address
        uint32_t file = kNone; // index into m_strings; kNone: no line (past a sequence's end)
        uint32_t line = 0;
        uint32_t column = 0;
        uint32_t reserved = 0;
    };
    struct Unit {
        std::vector<Entry> entries; // by address
        std::vector<uint32_t> fileIds;
        std::vector<const std::string *> files;
        // Still in the file: where its table starts, its counts and its checksum.
        bool pending = false;
        uint64_t at = 0;
        uint32_t fileCount = 0;
        uint32_t entryCount = 0;
        uint32_t crc = 0;
    };

    uint32_t stringId(const char *s);
    bool load();
    // The unit at `unitOffset`, read from the file if it is still there; null when not kept (or it did not read back,
    // and is dropped).
    const Unit *unit(Dwarf_Off unitOffset) const;
    bool readUnit(Unit &unit) const;

    std::string m_file; // "" when nothing is kept
    std::string m_key;
    std::deque<std::string> m_strings; // their addresses are handed out: a deque never moves them
    std::unordered_map<std::string, uint32_t> m_stringIds;
    mutable std::unordered_map<Dwarf_Off, Unit> m_units;
    int m_fd = -1; // the file the pending units are read from
    mutable size_t m_unitsReadBack = 0;
    size_t m_unitsAdded = 0;
    bool m_dirty = false;
};

} // namespace emberline::engine
