#include "engine/unwind/module_ids.h"

namespace emberline::engine {

uint32_t ModuleIds::idFor(const ModuleIdentity &identity)
{
    auto [it, inserted] = m_ids.try_emplace(identity, m_next);
    if (inserted)
        ++m_next;
    return it->second;
}

} // namespace emberline::engine
