-- Helper: the main chunk raises while loading.
error("svc_main_error: main chunk failure on purpose")
