// A dynamically linked program without the C library: the dynamic loader runs it (it has a program interpreter) but
// nothing in it exports dlopen, so nothing can be loaded into it. It naps 20 times 100 ms with raw system calls and
// exits 0.
static long syscall2(long number, long a, long b)
{
    long result;
    __asm__ volatile("syscall" : "=a"(result) : "a"(number), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return result;
}

__attribute__((force_align_arg_pointer, noreturn)) void _start(void)
{
    const struct {
        long seconds, nanoseconds;
    } nap = {0, 100000000};
    for (int i = 0; i < 20; ++i)
        syscall2(35, (long)&nap, 0); // nanosleep
    syscall2(60, 0, 0);              // exit
    for (;;) {}
}
