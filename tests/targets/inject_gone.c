// A library that inject_probe's PROBE_NEEDS_GONE build links against and that is then nowhere on the search path
// (it is built into a folder of its own, and the probe has no run path): dlopen of that probe fails, naming it.
int emberline_gone_marker(void)
{
    return 42;
}
