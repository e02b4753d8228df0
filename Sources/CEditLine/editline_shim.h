// libedit's readline interface, with setters for its globals: Swift 6 cannot touch C globals
// directly ("not concurrency-safe"); Lookout uses them from one thread, the REPL's input thread.
#include <stdio.h>
#include <editline/readline.h>

static inline void lookout_rl_set_name(const char *name) { rl_readline_name = name; }
static inline void lookout_rl_set_completion(rl_completion_func_t *fn) { rl_attempted_completion_function = fn; }
static inline void lookout_rl_set_completion_over(int over) { rl_attempted_completion_over = over; }
static inline void lookout_rl_set_word_breaks(char *chars) { rl_completer_word_break_characters = chars; }
static inline void lookout_rl_set_append_character(int c) { rl_completion_append_character = c; }
static inline void lookout_rl_set_catch_signals(int on) { rl_catch_signals = on; }
static inline const char *lookout_rl_line_buffer(void) { return rl_line_buffer; }
static inline int lookout_rl_point(void) { return rl_point; }
