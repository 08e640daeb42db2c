#pragma once

// Puts a named, one-byte instruction at this point of the code, so that tests find the exact address of a
// source line in the symbol table instead of guessing it from the compiler's output. The label is local to
// the object (not exported) and must appear once per program: mark only functions that are never cloned.
#define EMBERLINE_MARK(label) asm volatile(#label ":\n\tnop")
