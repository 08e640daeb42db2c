#include "ui/flamegraph/frame_colors.h"

#include "engine/model/python_frame.h"

#include <QHash>

#include <algorithm>

namespace emberline::ui {
namespace {

// Python's frames have the blues and teals to themselves: their base hues lie in [kPythonHueFirst, kPythonHueFirst +
// kPythonHueSpan), every other key's outside [kReservedFirst, kReservedFirst + kReservedSpan), which leaves a margin
// on each side for varied()'s shift of up to 6 degrees. So a Python function never looks like native code, whatever
// its module's hash.
constexpr int kPythonHueFirst = 185;
constexpr int kPythonHueSpan = 50;
constexpr int kReservedFirst = 170;
constexpr int kReservedSpan = 80;
constexpr QLatin1String kPythonKeyPrefix("python:");

uint32_t mixedHash(const QString &key)
{
    // FNV-1a over the UTF-8 bytes, then a multiplicative mix so that similar keys land far apart.
    uint32_t h = 2166136261u;
    for (char c : key.toUtf8()) {
        h ^= static_cast<uint8_t>(c);
        h *= 16777619u;
    }
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}

bool endsWith(const std::string &s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "github.com/x/y.(*T).M" → "github.com/x/y"; "main.fib" → "main".
QString goPackage(const std::string &name)
{
    const size_t slash = name.rfind('/');
    const size_t dot = name.find('.', slash == std::string::npos ? 0 : slash + 1);
    return QString::fromStdString(dot == std::string::npos ? name : name.substr(0, dot));
}

QString nodePackage(const std::string &file)
{
    static const std::string kModules = "node_modules/";
    const size_t pos = file.rfind(kModules);
    if (pos != std::string::npos) {
        const size_t start = pos + kModules.size();
        size_t end = file.find('/', start);
        if (end != std::string::npos && file[start] == '@') // scoped package: @scope/name
            end = file.find('/', end + 1);
        return QString::fromStdString(file.substr(start, end == std::string::npos ? end : end - start));
    }
    if (file.rfind("node:", 0) == 0) {
        const size_t slash = file.find('/');
        return QString::fromStdString(file.substr(0, slash));
    }
    const size_t slash = file.rfind('/');
    return QString::fromStdString(slash == std::string::npos ? file : file.substr(slash + 1));
}

bool isScriptFile(const std::string &file)
{
    return endsWith(file, ".js") || endsWith(file, ".mjs") || endsWith(file, ".cjs") || endsWith(file, ".ts") ||
           file.rfind("node:", 0) == 0;
}

// Neighbouring frames of one package differ slightly in shade (by a hash of the function name), so that they
// read as separate boxes while the package's hue stays recognisable.
QColor varied(const QColor &base, const std::string &name)
{
    uint32_t h = 2166136261u;
    for (char c : name) {
        h ^= static_cast<uint8_t>(c);
        h *= 16777619u;
    }
    const int hue = (base.hslHue() + static_cast<int>(h % 13) - 6 + 360) % 360;
    const int lightness = std::clamp(base.lightness() + static_cast<int>((h >> 8) % 21) - 10, 0, 255);
    return QColor::fromHsl(hue, base.hslSaturation(), lightness);
}

} // namespace

QString frameColorKey(const engine::Frame &frame)
{
    if (!frame.name.empty() && frame.name.front() == '(' && frame.file.empty())
        return QStringLiteral("(pseudo)");
    if (engine::isPythonFrame(frame)) {
        const std::string module = engine::pythonModuleName(frame.file);
        return QString(kPythonKeyPrefix) + QString::fromStdString(module.substr(0, module.find('.')));
    }
    if (endsWith(frame.file, ".go"))
        return goPackage(frame.name);
    if (isScriptFile(frame.file))
        return nodePackage(frame.file);
    if (!frame.module.empty())
        return QString::fromStdString(frame.module);
    const size_t scope = frame.name.find("::");
    if (scope != std::string::npos && scope > 0)
        return QString::fromStdString(frame.name.substr(0, scope));
    return QString::fromStdString(frame.name);
}

bool isPythonColorKey(const QString &key)
{
    return key.startsWith(kPythonKeyPrefix);
}

QColor colorForKey(const QString &key)
{
    const uint32_t h = mixedHash(key);
    if (isPythonColorKey(key)) {
        const int hue = kPythonHueFirst + static_cast<int>(h % kPythonHueSpan);
        const int saturation = 120 + static_cast<int>((h >> 9) % 60);
        const int lightness = 160 + static_cast<int>((h >> 17) % 28);
        return QColor::fromHsl(hue, saturation, lightness);
    }
    int hue = static_cast<int>(h % (360 - kReservedSpan));
    if (hue >= kReservedFirst)
        hue += kReservedSpan;
    const int saturation = 150 + static_cast<int>((h >> 9) % 60);
    const int lightness = 168 + static_cast<int>((h >> 17) % 24);
    return QColor::fromHsl(hue, saturation, lightness);
}

void FramePalette::reset(const engine::FrameTable *frames)
{
    m_normal.clear();
    m_dimmed.clear();
    if (!frames)
        return;
    QHash<QString, QColor> byKey;
    m_normal.reserve(frames->size());
    m_dimmed.reserve(frames->size());
    for (uint32_t f = 0; f < frames->size(); ++f) {
        const engine::Frame &frame = frames->frame(f);
        const QString key = frameColorKey(frame);
        auto it = byKey.find(key);
        if (it == byKey.end())
            it = byKey.insert(key, key == QLatin1String("(pseudo)") ? QColor(0xb4, 0xb4, 0xbc) : colorForKey(key));
        QColor color = varied(*it, frame.name);
        if (!frame.symbolized)
            color = QColor(0xb0, 0xb0, 0xb0);
        m_normal.push_back(color);
        const int grey = qGray(color.rgb());
        const auto fade = [grey](int channel) { return qMin(255, (channel + 3 * grey) / 4 + 24); };
        m_dimmed.push_back(QColor(fade(color.red()), fade(color.green()), fade(color.blue())));
    }
}

} // namespace emberline::ui
