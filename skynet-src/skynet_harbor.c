/*
 * Global names in a single node.
 *
 * Data structure: a linked list of entries {name, handle, pending messages}
 * (a node has a handful of global names). An entry with handle 0 exists
 * only to hold messages sent before its name was registered.
 *
 * Locking: one mutex covers the list. Registration detaches the pending
 * messages under the lock and pushes them after unlocking; a send that
 * finds the name registered pushes after unlocking too. A message sent
 * concurrently with the registration can therefore overtake queued ones:
 * ordering is kept for each sender that waited for the registration, which
 * is what a caller blocked on the name observes.
 */
#include "skynet_harbor.h"

#include "skynet.h"
#include "skynet_cond.h"
#include "skynet_handle.h"
#include "skynet_post.h"

#include <string.h>

struct pending_msg {
	struct skynet_message msg; // owns msg.data
	struct pending_msg *next;
};

struct global_name {
	char name[GLOBALNAME_LENGTH];
	uint32_t handle; // 0 until registered
	struct pending_msg *head;
	struct pending_msg *tail;
	struct global_name *next;
};

static struct {
	struct skynet_cond lock; // its mutex covers names
	struct global_name *names;
	uint32_t harbor; // shifted into the top 8 bits
} HARBOR;

static bool
valid_name(const char *name) {
	size_t len = strlen(name);
	return len > 0 && len < GLOBALNAME_LENGTH && name[0] != ':' && name[0] != '.';
}

static struct global_name *
find(const char *name) {
	for (struct global_name *g = HARBOR.names; g; g = g->next) {
		if (strcmp(g->name, name) == 0)
			return g;
	}
	return NULL;
}

static struct global_name *
find_or_add(const char *name) {
	struct global_name *g = find(name);
	if (g == NULL) {
		g = skynet_calloc(1, sizeof(*g));
		strcpy(g->name, name);
		g->next = HARBOR.names;
		HARBOR.names = g;
	}
	return g;
}

static void
bounce(struct skynet_message *msg, uint32_t from) {
	skynet_free(msg->data);
	if (msg->session != 0 && msg->source != 0) {
		struct skynet_message err = {
		    .source = from,
		    .session = msg->session,
		    .data = NULL,
		    .sz = skynet_message_sz(PTYPE_ERROR, 0),
		};
		skynet_post(msg->source, &err);
	}
}

int
skynet_harbor_send(const char *name, struct skynet_message *msg) {
	if (!valid_name(name))
		return SKYNET_EINVAL;
	skynet_cond_lock(&HARBOR.lock);
	struct global_name *g = find_or_add(name);
	uint32_t handle = g->handle;
	if (handle == 0) {
		struct pending_msg *p = skynet_malloc(sizeof(*p));
		p->msg = *msg;
		p->next = NULL;
		if (g->tail)
			g->tail->next = p;
		else
			g->head = p;
		g->tail = p;
	}
	skynet_cond_unlock(&HARBOR.lock);
	if (handle == 0)
		return 0;
	return skynet_post(handle, msg);
}

int
skynet_harbor_register(const char *name, uint32_t handle) {
	if (!valid_name(name) || handle == 0)
		return SKYNET_EINVAL;
	skynet_cond_lock(&HARBOR.lock);
	struct global_name *g = find_or_add(name);
	g->handle = handle;
	struct pending_msg *p = g->head;
	g->head = g->tail = NULL;
	skynet_cond_unlock(&HARBOR.lock);
	while (p) {
		struct pending_msg *next = p->next;
		if (skynet_post(handle, &p->msg) != 0)
			bounce(&p->msg, handle);
		skynet_free(p);
		p = next;
	}
	return 0;
}

bool
skynet_harbor_isremote(uint32_t handle) {
	uint32_t h = handle & ~(uint32_t)HANDLE_MASK;
	return h != HARBOR.harbor && h != 0;
}

void
skynet_harbor_init(int harbor) {
	skynet_cond_init(&HARBOR.lock);
	HARBOR.names = NULL;
	HARBOR.harbor = (uint32_t)(harbor & 0xff) << HANDLE_REMOTE_SHIFT;
}

void
skynet_harbor_exit(void) {
	struct global_name *g = HARBOR.names;
	while (g) {
		struct global_name *next = g->next;
		struct pending_msg *p = g->head;
		while (p) {
			struct pending_msg *pn = p->next;
			skynet_free(p->msg.data);
			skynet_free(p);
			p = pn;
		}
		skynet_free(g);
		g = next;
	}
	HARBOR.names = NULL;
	skynet_cond_destroy(&HARBOR.lock);
}
