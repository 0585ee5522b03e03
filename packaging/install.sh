#!/bin/bash
# make install / make uninstall: install files under DESTDIR and keep a
# manifest of every file, link, directory and group the install made, so
# that uninstall removes exactly those and nothing else (a directory that
# existed before stays; one the install made goes once it is empty).
# Documentation/install.md.
#
# usage: packaging/install.sh install DESTDIR MANIFEST GROUP <LIST
#        packaging/install.sh uninstall DESTDIR MANIFEST
# LIST: one entry a line, destinations absolute and without DESTDIR:
#   file MODE SRC DEST
#   link TARGET DEST
# MANIFEST is the manifest's installed path (without DESTDIR); GROUP the
# system group the udev rule names, made when missing (under DESTDIR only
# if DESTDIR has an etc/group).
set -eEu	# -E: the ERR trap below also in functions
action=$1 destdir=$2 manifest=$3

# remove ENTRIES [keep-group]: files and links first, then the
# directories (deepest first, the reverse of their creation order), then
# the group unless an upgrade keeps it (its gid may own device nodes).
remove() {
	local entries=$1 keep=${2:-} kind path

	while read -r kind path; do
		case "$kind" in
		file|link) rm -f "$destdir$path" ;;
		esac
	done <<<"$entries"
	tac <<<"$entries" | while read -r kind path; do
		if [ "$kind" = dir ]; then
			rmdir "$destdir$path" 2>/dev/null ||
				echo "uninstall: $path is not empty, left in place" >&2
		fi
	done
	while read -r kind path; do
		[ "$kind" = group ] || continue
		if [ -n "$keep" ]; then
			echo "group $path" >>"$new"
		elif [ -n "$destdir" ]; then
			groupdel --prefix "$destdir" "$path"
		else
			groupdel "$path"
		fi
	done <<<"$entries"
}

# uninstall [keep-group]: remove what the manifest lists (itself too).
uninstall() {
	[ -f "$destdir$manifest" ] || return 0
	remove "$(cat "$destdir$manifest")" "${1:-}"
}

# mkdirs DIR: make DIR and its missing parents, each recorded (DESTDIR
# itself is made unrecorded: it is the caller's).
mkdirs() {
	local d=$1

	[ -d "$destdir$d" ] && return 0
	[ "$d" != / ] || { mkdir -p "$destdir"; return 0; }
	mkdirs "$(dirname "$d")"
	mkdir "$destdir$d"
	echo "dir $d" >>"$new"
}

case "$action" in
uninstall)
	[ -f "$destdir$manifest" ] || {
		echo "uninstall: no $destdir$manifest: nothing installed with this PREFIX" >&2
		exit 1
	}
	uninstall
	;;
install)
	group=$4
	# A second install (an upgrade) first removes what the first made,
	# so no file of the old version stays behind.
	new=$(mktemp)
	trap 'rm -f "$new"' EXIT
	uninstall keep-group
	# A failed step undoes the steps before it: nothing stays unrecorded.
	trap 'remove "$(cat "$new")"' ERR
	while read -r kind a b c; do
		case "$kind" in
		file)
			mkdirs "$(dirname "$c")"
			install -m "$a" "$b" "$destdir$c"
			echo "file $c" >>"$new"
			;;
		link)
			mkdirs "$(dirname "$b")"
			ln -sfn "$a" "$destdir$b"
			echo "link $b" >>"$new"
			;;
		*) echo "install: bad list entry '$kind $a $b $c'" >&2; exit 2 ;;
		esac
	done
	if grep -qx "group $group" "$new"; then
		:	# made by the install this one replaces
	elif [ -z "$destdir" ]; then
		if ! getent group "$group" >/dev/null; then
			groupadd --system "$group"
			echo "group $group" >>"$new"
		fi
	elif [ -f "$destdir/etc/group" ]; then
		if ! grep -q "^$group:" "$destdir/etc/group"; then
			groupadd --prefix "$destdir" --system "$group"
			echo "group $group" >>"$new"
		fi
	else
		echo "install: $destdir has no etc/group: group $group not made" >&2
	fi
	mkdirs "$(dirname "$manifest")"
	echo "file $manifest" >>"$new"
	install -m 0644 "$new" "$destdir$manifest"
	;;
*)
	echo "usage: $0 install|uninstall DESTDIR MANIFEST [GROUP]" >&2
	exit 2
	;;
esac
