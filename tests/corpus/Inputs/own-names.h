// A header of the project's that defines a macro named as coconet's own
// (tests/corpus/own-names.cu), and one that pastes names together.
#define coconet_p_2 2
#define PASTE(a, b) a##b
