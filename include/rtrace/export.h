/* RTRACE_API marks the functions librtrace exports: the library is built
 * with hidden visibility (-fvisibility=hidden), so that only what the
 * public headers declare with it is in its dynamic symbol table and
 * internal helpers can change freely. */
#ifndef RTRACE_EXPORT_H
#define RTRACE_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define RTRACE_API __attribute__((visibility("default")))
#else
#define RTRACE_API
#endif

#endif
