/* Shared by the OpenNL-style tests that check what the OpenNL layer prints: everything it prints
 * through nlPrintfFuncs, kept in nl_messages between nl_capture() and nl_release(). Include after
 * <cnc_nl.h>, <stdarg.h>, <stdio.h> and <string.h>. */
#ifndef NL_MESSAGES_H
#define NL_MESSAGES_H

static char nl_messages[8192];

static int nl_capture_vprintf(const char* fmt, va_list ap) {
  const size_t used = strlen(nl_messages);
  return vsnprintf(nl_messages + used, sizeof nl_messages - used, fmt, ap);
}

static int nl_capture_fprintf(FILE* out, const char* fmt, ...) {
  (void)out;
  va_list ap;
  va_start(ap, fmt);
  const int r = nl_capture_vprintf(fmt, ap);
  va_end(ap);
  return r;
}

static int nl_capture_printf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int r = nl_capture_vprintf(fmt, ap);
  va_end(ap);
  return r;
}

/* From here on, what the layer prints goes to nl_messages (emptied first). */
static void nl_capture(void) {
  nl_messages[0] = 0;
  nlPrintfFuncs(nl_capture_printf, nl_capture_fprintf);
}

/* Back to OpenNL's default printing. */
static void nl_release(void) { nlPrintfFuncs(NULL, NULL); }

#endif
