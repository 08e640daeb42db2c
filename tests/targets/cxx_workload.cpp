// A translation unit for the memory benchmarks' compiler run (g++ -O2 -c, never built with Emberline): the
// standard library's heavy headers and some of their templates instantiated.
#include <algorithm>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>
int main()
{
    std::regex r("a+b*");
    std::map<std::string, int> m;
    std::unordered_map<int, std::vector<std::string>> u;
    m["x"] = std::regex_match("aab", r);
    std::sort(u[1].begin(), u[1].end());
    for (auto &p : std::filesystem::directory_iterator("."))
        m[p.path().string()]++;
    return m.size();
}
