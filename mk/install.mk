# make install [PREFIX=/usr/local] [DESTDIR=...]: the coconet command and the
# public runtime header that translated files include (runtime/include/coconet.h).
PREFIX ?= /usr/local

.PHONY: install
install: $(BIN)/coconet
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include
	install -m 755 $(BIN)/coconet $(DESTDIR)$(PREFIX)/bin/coconet
	install -m 644 runtime/include/coconet.h $(DESTDIR)$(PREFIX)/include/coconet.h
