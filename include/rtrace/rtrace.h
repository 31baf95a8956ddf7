/* librtrace: the rtrace format SDK. */
#ifndef RTRACE_RTRACE_H
#define RTRACE_RTRACE_H

#include "rtrace/binary.h"
#include "rtrace/callgrind.h"
#include "rtrace/diag.h"
#include "rtrace/filter.h"
#include "rtrace/heapcheck.h"
#include "rtrace/heapprof.h"
#include "rtrace/html.h"
#include "rtrace/resolve.h"
#include "rtrace/sarif.h"
#include "rtrace/supp.h"
#include "rtrace/text.h"
#include "rtrace/trace.h"
#include "rtrace/vgdoc.h"
#include "rtrace/vgxml.h"

#define RTRACE_VERSION "0.1.0"

#endif
