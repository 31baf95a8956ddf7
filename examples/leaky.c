/* A small program with a leak: each "request" keeps a header it never
 * frees. Built as build/examples/leaky; see scripts/demo.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct request {
	char *body;
	char *header;
};

static struct request *request_new(int i)
{
	struct request *r = malloc(sizeof *r);
	r->body = malloc(512);
	r->header = malloc(128);
	snprintf(r->header, 128, "X-Request: %d", i);
	return r;
}

static void request_free(struct request *r)
{
	free(r->body); /* the header is forgotten */
	free(r);
}

int main(void)
{
	char *config = strdup("port=8080");
	for (int i = 0; i < 3; i++)
		request_free(request_new(i));
	free(config);
	puts("served 3 requests");
	return 0;
}
