#include "engine/report/sample_type.h"

namespace emberline::engine {

Result<int> resolveSampleType(const Profile &profile, const std::string &name)
{
    int typeIndex = profile.defaultSampleTypeIndex();
    if (!name.empty()) {
        typeIndex = profile.sampleTypeIndex(name);
        if (typeIndex < 0) {
            std::string known;
            for (const ValueType &vt : profile.sampleTypes())
                known += (known.empty() ? "" : ", ") + profile.str(vt.type);
            return makeError(Error::Code::Invalid,
                             "no sample type '" + name + "' in this profile (it has: " + known + ")");
        }
    }
    if (typeIndex < 0)
        return makeError(Error::Code::Invalid, "the profile has no sample types");
    return typeIndex;
}

} // namespace emberline::engine
