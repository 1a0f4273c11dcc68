# make install [PREFIX=/usr/local] [DESTDIR=...]: the coconet and coconet-cc
# commands and their man pages, the runtime headers that translated files
# include (runtime/include/coconet.h, coconet_fused.h), and the host backend
# (its headers under include/coconet/host, libcoconet_host.a): the layout
# coconet-cc looks for next to itself when it is not in the build tree.
PREFIX ?= /usr/local

.PHONY: install
install: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include/coconet/host $(DESTDIR)$(PREFIX)/lib \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN)/coconet $(BIN)/coconet-cc $(DESTDIR)$(PREFIX)/bin/
	install -m 644 runtime/include/coconet.h runtime/include/coconet_fused.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 docs/coconet.1 docs/coconet-cc.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	cp -R $(HOST_DIR)/include/. $(DESTDIR)$(PREFIX)/include/coconet/host/
	install -m 644 $(HOST_LIB) $(DESTDIR)$(PREFIX)/lib/libcoconet_host.a
