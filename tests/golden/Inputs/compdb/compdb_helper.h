// A project header found only through compile_commands.json's include path.
#pragma once
static inline void helper_scale(float *g) { (void)g; }
