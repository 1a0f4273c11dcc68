// effect-macros.h: macros for effects.cu's CASE_MACRO, in a header as trainers
// keep them: one an expression of its arguments, one that assigns its argument.
#pragma once
#define CORRECTED(beta, t) (1.0f - (beta) * (float)(t))
#define DECAYED(beta) ((beta) *= 0.5f)
