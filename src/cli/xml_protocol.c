/* --xml-protocol, shared by rtrace run and rtrace convert: which protocol
 * the memcheck document of rtrace's findings is written in. By default 4
 * unless it holds descriptor errors (protocol 5's kinds); the readers
 * that know 4 only (Qt Creator, Test::Valgrind, valgrind-xml-4.rng)
 * refuse a 5 or an unknown kind, so a user can force 4, and is told on
 * stderr what that leaves out. */
#include "cli.h"
#include "rtrace/vgxml.h"

#include <string.h>

unsigned cli_parse_xml_protocol(const char *cmd, const char *arg)
{
	if (strcmp(arg, "4") && strcmp(arg, "5"))
		cli_die_usage(cmd, "invalid --xml-protocol '%s': expected 4 or 5", arg);
	return (unsigned)(*arg - '0');
}

void cli_xml_protocol_note(const rt_trace *t, unsigned protocol)
{
	size_t n = protocol == 4 ? rt_vgxml_fd_error_count(t) : 0;
	if (n)
		cli_warning("%zu descriptor error%s left out of the XML: protocol 4 has no kind for them "
			    "(--xml-protocol=5 writes them)", n, n == 1 ? "" : "s");
}
