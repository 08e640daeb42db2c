#pragma once

#include <string>

namespace emberline::engine {

// A shared library opened when it is first needed (dlopen), not at the program's start: libcurl and libdebuginfod,
// with the TLS, Kerberos and LDAP libraries they need, are about half the shared objects an `emberline record` would
// map and bind at its start (some 10 ms of CPU), for an upload or a debuginfod fetch that most sessions never make.
// The library stays loaded until the program exits.
class SharedLibrary {
public:
    explicit SharedLibrary(const char *soname);
    SharedLibrary(const SharedLibrary &) = delete;
    SharedLibrary &operator=(const SharedLibrary &) = delete;

    bool loaded() const { return m_handle != nullptr; }
    // Why the library or one of its functions could not be had ("libcurl.so.4: cannot open shared object file ...").
    const std::string &error() const { return m_error; }

    // Sets `function` to the library's `name`; false (and error() says why) where the library lacks it.
    template <typename Function> bool bind(Function *&function, const char *name)
    {
        function = reinterpret_cast<Function *>(symbol(name));
        return function != nullptr;
    }

private:
    void *symbol(const char *name);

    void *m_handle = nullptr;
    std::string m_soname;
    std::string m_error;
};

// A library's functions as loaded once for the whole program (a function-local static): `api` where `ok`, else
// `error` says why.
template <typename Api> struct LoadedFunctions {
    Api api;
    bool ok = false;
    std::string error;

    // The functions, or null with `why` (if given) set.
    const Api *get(std::string *why) const
    {
        if (!ok && why != nullptr)
            *why = error;
        return ok ? &api : nullptr;
    }
};

} // namespace emberline::engine
