// inject_target's "registers" mode: a thread that holds known values in every register a remote call could clobber
// and checks them in a tight loop, so that a call injected into it that did not restore its state exactly is seen:
// eleven general registers (rbx, rsi, rdi, r8-r15), ymm0-ymm13 (and zmm16-zmm23 with AVX-512), two values on the x87
// register stack (the call empties it, as the ABI wants), MXCSR (flush-to-zero, round toward zero) and the x87
// control word (53-bit precision). A changed register makes the program print which and exit 7.
#include "target_common.h"

#include <stdio.h>
#include <unistd.h>

void inject_target_registers(double seconds);

__attribute__((used, aligned(64))) unsigned char inject_vector_pattern[24][64];
__attribute__((used)) unsigned inject_failed_check;
__attribute__((used)) unsigned inject_mxcsr_seen;
__attribute__((used)) unsigned short inject_fcw_seen;
__attribute__((used)) const unsigned inject_mxcsr_default = 0x1f80;
__attribute__((used)) const unsigned short inject_fcw_default = 0x37f;

// The asm is built from one macro per register, one per line; clang-format would pack them into unreadable rows.
// clang-format off
#define LOAD_GPR(reg, value) "movabs $" #value ", %%" #reg "\n"
#define CHECK_GPR(reg, value, n) \
    "movabs $" #value ", %%rax\n cmp %%rax, %%" #reg "\n movl $" #n ", inject_failed_check(%%rip)\n jne 2f\n"
#define LOAD_YMM(i) "vmovdqa inject_vector_pattern+" #i "*64(%%rip), %%ymm" #i "\n"
#define CHECK_YMM(i) \
    "vpcmpeqb inject_vector_pattern+" #i "*64(%%rip), %%ymm" #i ", %%ymm15\n vpmovmskb %%ymm15, %%edx\n" \
    " movl $(100+" #i "), inject_failed_check(%%rip)\n cmp $-1, %%edx\n jne 2f\n"
#define LOAD_ZMM(i) "vmovdqa64 inject_vector_pattern+" #i "*64(%%rip), %%zmm" #i "\n"
#define CHECK_ZMM(i) \
    "vpcmpeqq inject_vector_pattern+" #i "*64(%%rip), %%zmm" #i ", %%k1\n kmovw %%k1, %%edx\n" \
    " movl $(100+" #i "), inject_failed_check(%%rip)\n cmp $0xff, %%edx\n jne 2f\n"

#define LOADS \
    LOAD_GPR(rbx, 0x1111111111111111) \
    LOAD_GPR(rsi, 0x2222222222222222) \
    LOAD_GPR(rdi, 0x3333333333333333) \
    LOAD_GPR(r8, 0x4444444444444444) \
    LOAD_GPR(r9, 0x5555555555555555) \
    LOAD_GPR(r10, 0x6666666666666666) \
    LOAD_GPR(r11, 0x7777777777777777) \
    LOAD_GPR(r12, 0x0123456789abcdef) \
    LOAD_GPR(r13, 0x7edcba9876543210) \
    LOAD_GPR(r14, 0x0f0f0f0f0f0f0f0f) \
    LOAD_GPR(r15, 0x7070707070707070) \
    LOAD_YMM(0) LOAD_YMM(1) LOAD_YMM(2) LOAD_YMM(3) LOAD_YMM(4) LOAD_YMM(5) LOAD_YMM(6) \
    LOAD_YMM(7) LOAD_YMM(8) LOAD_YMM(9) LOAD_YMM(10) LOAD_YMM(11) LOAD_YMM(12) LOAD_YMM(13) \
    "fld1\n fldpi\n fldcw inject_fcw_loop(%%rip)\n ldmxcsr inject_mxcsr_loop(%%rip)\n"

#define CHECKS \
    CHECK_GPR(rbx, 0x1111111111111111, 1) \
    CHECK_GPR(rsi, 0x2222222222222222, 2) \
    CHECK_GPR(rdi, 0x3333333333333333, 3) \
    CHECK_GPR(r8, 0x4444444444444444, 8) \
    CHECK_GPR(r9, 0x5555555555555555, 9) \
    CHECK_GPR(r10, 0x6666666666666666, 10) \
    CHECK_GPR(r11, 0x7777777777777777, 11) \
    CHECK_GPR(r12, 0x0123456789abcdef, 12) \
    CHECK_GPR(r13, 0x7edcba9876543210, 13) \
    CHECK_GPR(r14, 0x0f0f0f0f0f0f0f0f, 14) \
    CHECK_GPR(r15, 0x7070707070707070, 15) \
    CHECK_YMM(0) CHECK_YMM(1) CHECK_YMM(2) CHECK_YMM(3) CHECK_YMM(4) CHECK_YMM(5) CHECK_YMM(6) \
    CHECK_YMM(7) CHECK_YMM(8) CHECK_YMM(9) CHECK_YMM(10) CHECK_YMM(11) CHECK_YMM(12) CHECK_YMM(13) \
    "fldpi\n fucomip %%st(1), %%st\n movl $200, inject_failed_check(%%rip)\n jp 2f\n jne 2f\n" \
    "stmxcsr inject_mxcsr_seen(%%rip)\n cmpl $0xffc0, inject_mxcsr_seen(%%rip)\n" \
    " movl $201, inject_failed_check(%%rip)\n jne 2f\n" \
    "fnstcw inject_fcw_seen(%%rip)\n cmpw $0x27f, inject_fcw_seen(%%rip)\n" \
    " movl $202, inject_failed_check(%%rip)\n jne 2f\n"

#define LOOP_END \
    "dec %%rcx\n jnz 1b\n xor %%eax, %%eax\n jmp 3f\n" \
    "2: mov $1, %%eax\n" \
    "3: fstp %%st(0)\n fstp %%st(0)\n ldmxcsr inject_mxcsr_default(%%rip)\n fldcw inject_fcw_default(%%rip)\n" \
    " vzeroupper\n"

#define CLOBBERS \
    "rbx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
    "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", \
    "st", "st(1)", "memory", "cc"
// clang-format on

__attribute__((used)) const unsigned inject_mxcsr_loop = 0xffc0;
__attribute__((used)) const unsigned short inject_fcw_loop = 0x27f;

__attribute__((noipa, target("avx2"))) static int check_avx2(long iterations)
{
    int failed;
    __asm__ volatile(LOADS "1:\n" CHECKS LOOP_END : "=a"(failed), "+c"(iterations) : : CLOBBERS);
    return failed;
}

// clang-format off
__attribute__((noipa, target("avx512f"))) static int check_avx512(long iterations)
{
    int failed;
    __asm__ volatile(LOADS
                     LOAD_ZMM(16) LOAD_ZMM(17) LOAD_ZMM(18) LOAD_ZMM(19)
                     LOAD_ZMM(20) LOAD_ZMM(21) LOAD_ZMM(22) LOAD_ZMM(23)
                     "1:\n" CHECKS
                     CHECK_ZMM(16) CHECK_ZMM(17) CHECK_ZMM(18) CHECK_ZMM(19)
                     CHECK_ZMM(20) CHECK_ZMM(21) CHECK_ZMM(22) CHECK_ZMM(23)
                     LOOP_END
                     : "=a"(failed), "+c"(iterations)
                     :
                     : CLOBBERS, "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "k1");
    return failed;
}
// clang-format on

void inject_target_registers(double seconds)
{
    for (int v = 0; v < 24; ++v)
        for (int b = 0; b < 64; ++b)
            inject_vector_pattern[v][b] = (unsigned char)(v * 64 + b * 7 + 1);
    __builtin_cpu_init();
    const int avx512 = __builtin_cpu_supports("avx512f");
    if (!__builtin_cpu_supports("avx2")) {
        fprintf(stderr, "inject_target: this processor has no AVX2, which the register check uses\n");
        _exit(8);
    }
    printf("registers_checked %s\n", avx512 ? "avx512" : "avx2");
    fflush(stdout);
    const double end = target_now() + seconds;
    long blocks = 0;
    while (target_now() < end) {
        if (avx512 ? check_avx512(200000) : check_avx2(200000)) {
            fprintf(stderr,
                    "inject_target: register check %u failed (1-15: general, 100+: vector, 200: x87 stack, "
                    "201: MXCSR, 202: x87 control word)\n",
                    inject_failed_check);
            _exit(7);
        }
        ++blocks;
    }
    printf("registers_blocks %ld\n", blocks);
}
