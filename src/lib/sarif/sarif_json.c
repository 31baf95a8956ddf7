/* JSON for the SARIF writer: members and elements written as they come,
 * with the commas and the two-space indentation kept per level, so that
 * the writer reads as the document's shape and needs no tree in memory.
 * Strings carry any bytes: JSON text is UTF-8, so a byte of invalid UTF-8
 * (a file name in another encoding) is written as the four characters
 * \xNN, as the Valgrind XML writer writes it. */
#include "sarif/sarif_int.h"
#include "util/util.h"

#include <string.h>

static void newline(sj *j)
{
	rt_out_ch(j->o, '\n');
	for (int i = 0; i < j->depth; i++)
		rt_out_str(j->o, "  ");
}

static void put_escaped(rt_out *o, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	rt_out_ch(o, '"');
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		size_t l = c >= 0x80 ? rt_utf8_len(s + i, n - i) : 1;
		if (c >= 0x80 && l) {
			rt_out_mem(o, s + i, l);
			i += l;
			continue;
		}
		i++;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			rt_out_mem(o, e, 2);
		} else if (c == '\n') {
			rt_out_str(o, "\\n");
		} else if (c == '\t') {
			rt_out_str(o, "\\t");
		} else if (c < 0x20) {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			rt_out_mem(o, e, 6);
		} else if (c >= 0x80) {
			char e[5] = {'\\', '\\', 'x', hex[c >> 4], hex[c & 15]};
			rt_out_mem(o, e, 5);
		} else {
			rt_out_ch(o, (char)c);
		}
	}
	rt_out_ch(o, '"');
}

/* The comma, line and indentation before a member or element, and the
 * member's name. */
static void lead(sj *j, const char *key)
{
	if (j->depth > 0) {
		if (j->more[j->depth])
			rt_out_ch(j->o, ',');
		j->more[j->depth] = true;
		newline(j);
	}
	if (key) {
		put_escaped(j->o, key, strlen(key));
		rt_out_str(j->o, ": ");
	}
}

static void sj_open(sj *j, const char *key, char c)
{
	lead(j, key);
	rt_out_ch(j->o, c);
	if (j->depth + 1 < SJ_MAX_DEPTH)
		j->depth++;
	j->more[j->depth] = false;
}

void sj_obj(sj *j, const char *key)
{
	sj_open(j, key, '{');
}

void sj_arr(sj *j, const char *key)
{
	sj_open(j, key, '[');
}

void sj_end(sj *j, char close)
{
	bool had = j->more[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (had)
		newline(j);
	rt_out_ch(j->o, close);
	if (!j->depth)
		rt_out_ch(j->o, '\n');
}

void sj_strn(sj *j, const char *key, const char *s, size_t n)
{
	lead(j, key);
	put_escaped(j->o, s, n);
}

void sj_str(sj *j, const char *key, const char *s)
{
	sj_strn(j, key, s, strlen(s));
}

void sj_u64(sj *j, const char *key, uint64_t v)
{
	lead(j, key);
	rt_out_u64(j->o, v);
}

void sj_text(sj *j, const char *key, const char *s)
{
	sj_obj(j, key);
	sj_str(j, "text", s);
	sj_end(j, '}');
}
