# skywheel build. Variants go through BUILD= (output folder), OPT=, SAN=,
# MYCFLAGS= and MYLDFLAGS=; WERROR=1 turns warnings into errors (CI).
#
#   make            ./skynet, cservice/*.so, luaclib/*.so
#   make run        the demo game server (examples/config)
#   make test       unit tests, then the Lua integration tests
#   make test-asan  the same under AddressSanitizer + UBSan (build/asan)
#   make test-tsan  the same under ThreadSanitizer (build/tsan)
#   make lint       luacheck over the Lua (.luacheckrc); no file points outside the repo
#   make bench      benchmarks, one "BENCH name=... value=... unit=..." line each
#   make fuzz       libFuzzer targets (clang, build/fuzz), FUZZ_SECONDS each;
#                   one "FUZZ target=... execs=... crashes=..." line each
#   make docs-check every Lua function and config key documented in docs/, links resolve

BUILD ?= .
OPT ?= -O2
SAN ?=
WERROR ?= 0
CC ?= cc

DEPS_STATUS := $(shell sh 3rd/deps.sh 1>&2 && echo ok)
ifneq ($(DEPS_STATUS),ok)
$(error 3rd/deps.sh: a Debian package is missing, see the message above)
endif

LUA_CFLAGS := $(shell pkg-config --cflags lua5.4)
LUA_LIBS := $(shell pkg-config --libs lua5.4)
CRYPTO_CFLAGS := $(shell pkg-config --cflags libcrypto)
CRYPTO_LIBS := $(shell pkg-config --libs libcrypto)

WARN := -Wall -Wextra -Wno-unused-parameter -Wstrict-prototypes -Wshadow -Wpointer-arith
ifeq ($(WERROR),1)
WARN += -Werror
endif
CFLAGS := -std=gnu11 $(OPT) -g $(WARN) -MMD -MP -pthread $(SAN) $(LUA_CFLAGS) $(CRYPTO_CFLAGS) \
	-Iskynet-src $(MYCFLAGS)
LDFLAGS := -pthread $(SAN) $(MYLDFLAGS)
LIBS := $(LUA_LIBS) -ldl -lm

# Objects and test/bench binaries; the default build keeps them under build/default.
OBJ := $(if $(filter .,$(BUILD)),build/default,$(BUILD)/obj)
CORE_SRC := $(filter-out skynet-src/skynet_main.c,$(wildcard skynet-src/*.c))
CORE_OBJ := $(patsubst skynet-src/%.c,$(OBJ)/core/%.o,$(CORE_SRC))
CORE_LIB := $(OBJ)/libskynet.a

CSERVICE := $(patsubst service-src/service_%.c,$(BUILD)/cservice/%.so,\
	$(wildcard service-src/service_*.c))
# skynet.so: the lua-*.c modules, and skynet.kernel's parts in lualib-src/kernel/.
LUALIB_SRC := $(wildcard lualib-src/lua-*.c) $(wildcard lualib-src/kernel/*.c)
LUALIB_OBJ := $(patsubst lualib-src/%.c,$(OBJ)/lualib/%.o,$(LUALIB_SRC))
LUACLIB := $(if $(LUALIB_SRC),$(BUILD)/luaclib/skynet.so)

UNIT_TESTS := $(patsubst test/unit/%.c,$(OBJ)/test/%,$(wildcard test/unit/test_*.c))
BENCHES := $(patsubst bench/%.c,$(OBJ)/bench/%,$(wildcard bench/bench_*.c))

.PHONY: all run test test-asan test-tsan bench clean format format-check lint docs-check unit-tests \
	benches

all: $(BUILD)/skynet $(CSERVICE) $(LUACLIB)

# The flame graph page's scripts, which the metrics service serves at /profile
# (lualib/skynet/profiler/page.lua): d3 and d3-flame-graph from the npm registry,
# pinned by web/flamegraph/package-lock.json, installed into the git-ignored
# web/flamegraph/node_modules by npm ci (3rd/deps.sh makes sure npm is there).
FLAMEGRAPH_STAMP := web/flamegraph/node_modules/.package-lock.json
all: $(FLAMEGRAPH_STAMP)
$(FLAMEGRAPH_STAMP): web/flamegraph/package.json web/flamegraph/package-lock.json
	cd web/flamegraph && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(OBJ)/core/%.o: skynet-src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# -Wl,-E exports the core's symbols to the modules loaded with dlopen.
$(BUILD)/skynet: $(OBJ)/core/skynet_main.o $(CORE_OBJ)
	$(CC) $(LDFLAGS) -Wl,-E -o $@ $^ $(LIBS)

$(BUILD)/cservice/%.so: service-src/service_%.c
	@mkdir -p $(dir $@) $(OBJ)/cservice
	$(CC) $(CFLAGS) -fPIC -shared -MF $(OBJ)/cservice/$*.d -o $@ $<

# snlua is service_snlua.c plus its parts in service-src/snlua/, one object each.
SNLUA_OBJ := $(patsubst service-src/snlua/%.c,$(OBJ)/snlua/%.o,$(wildcard service-src/snlua/*.c))
$(OBJ)/snlua/%.o: service-src/snlua/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/cservice/snlua.so: service-src/service_snlua.c $(SNLUA_OBJ)
	@mkdir -p $(dir $@) $(OBJ)/cservice
	$(CC) $(CFLAGS) -fPIC -shared -MF $(OBJ)/cservice/snlua.d -o $@ $< $(SNLUA_OBJ)

$(OBJ)/lualib/%.o: lualib-src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c -o $@ $<

# skynet.kernel (lualib-src/kernel/) is built without ThreadSanitizer. Its C
# functions yield (lua_yieldk) and raise through Lua's longjmp with their own
# frames on the stack, and the frames a longjmp skips are not popped from
# TSan's shadow stack. Tried again after the kernel's split (2026-11): with
# the kernel instrumented, 6 of the 77 Lua tests (smoke_timer, timeout_mass,
# net_echo, net_gate, game_bad, cluster_abuse: the yield-heavy ones) run past
# their 60 s, mostly in system time; without it they pass (in 5 to 20 s). The
# kernel keeps no data shared between threads (a state is run by one worker
# at a time); what TSan checks is the hand-off between workers, in the core
# and snlua, which stay instrumented. make test-asan covers the kernel.
$(OBJ)/lualib/kernel/%.o: CFLAGS += -fno-sanitize=thread

$(BUILD)/luaclib/skynet.so: $(LUALIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -o $@ $^ $(LUACLIB_LIBS_skynet)

# Lua C modules outside skynet.so: the sources in lualib-src/NAME/ (but kernel/) build
# luaclib/NAME.so, where stock Lua finds `require "NAME.x"` (luaopen_NAME_x)
# and `require "NAME"`. Extra link libraries of NAME.so go in LUACLIB_LIBS_NAME.
EXTRA_LUACLIB_DIRS := $(filter-out kernel,\
	$(patsubst lualib-src/%/,%,$(sort $(dir $(wildcard lualib-src/*/*.c)))))
EXTRA_LUACLIB := $(patsubst %,$(BUILD)/luaclib/%.so,$(EXTRA_LUACLIB_DIRS))
all: $(EXTRA_LUACLIB)
define luaclib_rule
$(BUILD)/luaclib/$(1).so: $$(patsubst lualib-src/%.c,$(OBJ)/lualib/%.o,$$(wildcard lualib-src/$(1)/*.c))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -shared -o $$@ $$^ $$(LUACLIB_LIBS_$(1))
endef
$(foreach d,$(EXTRA_LUACLIB_DIRS),$(eval $(call luaclib_rule,$(d))))

# libcrypto users: skynet.crypt (in skynet.so) and md5.core (md5.so). client.so
# holds client.crypt, for a plain lua5.4: the same object as skynet.crypt; and
# client.socket (lualib-src/client/lua-socket.c), skynet's socket module for clients.
LUACLIB_LIBS_skynet := $(CRYPTO_LIBS)
LUACLIB_LIBS_md5 := $(CRYPTO_LIBS)
LUACLIB_LIBS_client := $(CRYPTO_LIBS)
# sqlite.so (lualib-src/sqlite/): skynet.db.sqlite's core and database threads.
LUACLIB_LIBS_sqlite := $(shell pkg-config --libs sqlite3)
# ltls.so (lualib-src/ltls/): TLS for http.httpc/httpd and http.websocket.
LUACLIB_LIBS_ltls := $(shell pkg-config --libs libssl) $(CRYPTO_LIBS)
$(BUILD)/luaclib/client.so: $(OBJ)/lualib/lua-crypt.o

# sproto.so carries its own copy of the allocator (skynet-src/skynet_malloc.c, built
# position-independent), so that a plain lua5.4 (a terminal client) can load sproto.core.
# Inside a node that copy is never called: the executable exports its skynet_malloc
# (-Wl,-E), and the dynamic linker binds the library's calls to the executable's
# definitions, which come first in the global lookup order.
$(OBJ)/pic/%.o: skynet-src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c -o $@ $<
$(BUILD)/luaclib/sproto.so: $(OBJ)/pic/skynet_malloc.o

# The demo's terminal client: its socket module, loaded by the system lua5.4
# (examples/lua-clientsocket.c), and `make client` to play (examples/).
# `make console` talks to the demo's debug console (debug_console_port in
# examples/config) with the same module: examples/console_client.lua.
CLIENTSOCKET := $(BUILD)/luaclib/clientsocket.so
all: $(CLIENTSOCKET)
$(CLIENTSOCKET): examples/lua-clientsocket.c
	@mkdir -p $(dir $@) $(OBJ)/examples
	$(CC) $(CFLAGS) -fPIC -shared -MF $(OBJ)/examples/clientsocket.d -o $@ $< $(LDFLAGS)
.PHONY: client
client: $(CLIENTSOCKET)
	@LUA_CPATH="$(BUILD)/luaclib/?.so" lua5.4 examples/client.lua $(CLIENT_ARGS)
CONSOLE_ARGS ?= 127.0.0.1 8000
.PHONY: console
console: $(CLIENTSOCKET)
	@LUA_CPATH="$(BUILD)/luaclib/?.so" lua5.4 examples/console_client.lua $(CONSOLE_ARGS)

$(OBJ)/test/%: test/unit/%.c $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest/unit -MF $@.d -o $@ $< $(CORE_LIB) $(LDFLAGS) $(LIBS)

# The socket server as a library of its own: the test links the core's
# socket_server.o and nothing else of the runtime (a call into it would fail
# the link).
$(OBJ)/test/test_socket_alone.o: test/unit/test_socket_alone.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest/unit -c -o $@ $<

$(OBJ)/test/test_socket_alone: $(OBJ)/test/test_socket_alone.o $(OBJ)/core/socket_server.o
	$(CC) $(LDFLAGS) -o $@ $^

# snlua's bytecode rewriter on its own: the test links its object with the core.
$(OBJ)/test/test_slim: test/unit/test_slim.c $(OBJ)/snlua/slim.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest/unit -Iservice-src -MF $@.d -o $@ $< $(OBJ)/snlua/slim.o $(CORE_LIB) \
		$(LDFLAGS) $(LIBS)

# snlua's allocator and lazy libraries on their own, on a plain lua_State.
$(OBJ)/test/test_snlua_alloc: test/unit/test_snlua_alloc.c $(OBJ)/snlua/alloc.o \
		$(OBJ)/snlua/lazylib.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest/unit -Iservice-src -MF $@.d -o $@ $< $(OBJ)/snlua/alloc.o \
		$(OBJ)/snlua/lazylib.o $(CORE_LIB) $(LDFLAGS) $(LIBS)

$(OBJ)/bench/%: bench/%.c $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest/unit -MF $@.d -o $@ $< $(CORE_LIB) $(LDFLAGS) $(LIBS)

# Bench-only C services: bench/svc_NAME.c becomes $(OBJ)/bench/cservice/NAME.so.
BENCH_CSERVICE := $(patsubst bench/svc_%.c,$(OBJ)/bench/cservice/%.so,$(wildcard bench/svc_*.c))
$(OBJ)/bench/cservice/%.so: bench/svc_%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -MF $@.d -o $@ $<

# Test-only Lua C modules: test/luaclib/lua-NAME.c becomes $(OBJ)/test/luaclib/NAME.so, built
# by make test and never installed in luaclib/ (node tests find them through SKYNET_OBJ).
TEST_LUACLIB := $(patsubst test/luaclib/lua-%.c,$(OBJ)/test/luaclib/%.so,\
	$(wildcard test/luaclib/lua-*.c))
$(OBJ)/test/luaclib/%.so: test/luaclib/lua-%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -MF $@.d -o $@ $<

unit-tests: $(UNIT_TESTS) $(TEST_LUACLIB)
benches: $(BENCHES) $(BENCH_CSERVICE)

run: all
	$(BUILD)/skynet examples/config

# SKYNET_SAN tells the tests which sanitizer the build has (address, thread or empty).
SKYNET_SAN ?=
test: all unit-tests
	@sh 3rd/deps-test.sh
	@SKYNET_SAN=$(SKYNET_SAN) sh test/run.sh $(BUILD) $(OBJ)

SAN_COMMON := -fno-omit-frame-pointer
test-asan:
	@$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 SKYNET_SAN=address \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=all $(SAN_COMMON)" test

test-tsan:
	@$(MAKE) --no-print-directory BUILD=build/tsan OPT=-O1 SKYNET_SAN=thread \
		SAN="-fsanitize=thread $(SAN_COMMON)" MYCFLAGS=-DSKYNET_TSAN TT_STRESS=1 test

bench: all benches
	@sh bench/run.sh $(BUILD) $(OBJ)

# Fuzzing: every decoder of outside bytes has a libFuzzer target test/fuzz/fuzz_NAME.c.
# `make fuzz` checks for clang (test/fuzz/deps.sh), builds the core and the targets with
# clang under ASan+UBSan into build/fuzz, and runs each target FUZZ_SECONDS seconds from
# its seeds (test/fuzz/corpus/NAME; new inputs go to build/fuzz/corpus/NAME only).
FUZZ_SECONDS ?= 30
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all $(SAN_COMMON)
FUZZ_TARGETS := $(patsubst test/fuzz/%.c,$(OBJ)/fuzz/%,$(wildcard test/fuzz/fuzz_*.c))

FUZZ_IGNORE := test/fuzz/coverage-ignore.txt

$(OBJ)/fuzz/%: test/fuzz/%.c $(CORE_LIB) $(FUZZ_IGNORE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -fsanitize-coverage-ignorelist=$(FUZZ_IGNORE) -Itest/fuzz \
		-MF $@.d -o $@ $< $(CORE_LIB) $(LDFLAGS) $(LIBS)

.PHONY: fuzz fuzz-targets
fuzz-targets: $(FUZZ_TARGETS)

fuzz:
	@FUZZ_CC=$(FUZZ_CC) sh test/fuzz/deps.sh
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=$(FUZZ_CC) OPT=-O1 SAN="$(FUZZ_SAN)" \
		fuzz-targets
	@sh test/fuzz/run.sh build/fuzz $(FUZZ_SECONDS)

FORMAT_SRC = $(wildcard skynet-src/*.[ch] service-src/*.c service-src/snlua/*.[ch] \
	lualib-src/*.[ch] lualib-src/*/*.[ch] test/unit/*.[ch] test/luaclib/*.c \
	bench/*.c examples/*.c test/fuzz/*.[ch])
format:
	clang-format -i $(FORMAT_SRC)

format-check:
	clang-format --dry-run --Werror $(FORMAT_SRC)

# Lua lint: luacheck (Debian lua-check; 3rd/deps-test.sh installs it or prints
# the command) with .luacheckrc, then test/lint/refs.sh: no file points at a
# path or document outside the repository; then test/lint/cycles.sh: no circle
# among skynet-src modules, in their #includes or their calls (nm on the objects).
LINT_LUA := lualib service examples test bench docs/types
lint: $(CORE_OBJ)
	@command -v luacheck >/dev/null 2>&1 || sh 3rd/deps-test.sh
	luacheck -q $(LINT_LUA)
	@sh test/lint/refs.sh
	@sh test/lint/cycles.sh . $(OBJ)/core

# Every public Lua function and config key has a reference entry in docs/, every relative link
# in README.md and docs/ resolves (docs/tools/check.lua; the lists come from docs/tools/api.lua);
# then the check itself is checked on a broken copy (test/docs/test_docs_check.sh).
docs-check:
	lua5.4 docs/tools/check.lua
	@sh test/docs/test_docs_check.sh

clean:
	rm -rf skynet cservice luaclib build web/flamegraph/node_modules

-include $(wildcard $(OBJ)/*/*.d $(OBJ)/*/*/*.d)
