# tests/packaging/uci_stub.sh - a small stand-in for OpenWrt's /lib/functions.sh
# UCI helpers, enough to run /etc/init.d/ferry's translation function in a
# plain POSIX shell. Like the real config_load, it evaluates the UCI file as
# shell code through config/option/list; anonymous sections get cfgNNNNNN names.
# Set UCI_CONFIG_DIR to the folder holding the config files (default /etc/config).

config() {  # config TYPE [NAME]
	CONFIG_NUM_SECTIONS=$((CONFIG_NUM_SECTIONS + 1))
	CONFIG_SECTION="${2:-$(printf 'cfg%02x%04x' "$CONFIG_NUM_SECTIONS" 0)}"
	CONFIG_SECTIONS="$CONFIG_SECTIONS $CONFIG_SECTION"
	eval "CONFIG_${CONFIG_SECTION}_TYPE=\$1"
}
option() {  # option NAME VALUE
	eval "CONFIG_${CONFIG_SECTION}_$1=\$2"
}
list() {  # list NAME VALUE
	local len
	eval "len=\${CONFIG_${CONFIG_SECTION}_$1_LENGTH:-0}"
	len=$((len + 1))
	eval "CONFIG_${CONFIG_SECTION}_$1_ITEM$len=\$2"
	eval "CONFIG_${CONFIG_SECTION}_$1_LENGTH=$len"
}
config_load() {  # config_load PACKAGE
	local s
	for s in $CONFIG_SECTIONS; do   # forget a previous load
		for v in $(set | sed -n "s/^\(CONFIG_${s}_[A-Za-z0-9_]*\)=.*/\1/p"); do unset "$v"; done
	done
	CONFIG_SECTIONS= CONFIG_NUM_SECTIONS=0 CONFIG_SECTION=
	. "${UCI_CONFIG_DIR:-/etc/config}/$1"
}
config_get() {  # config_get VAR SECTION OPTION [DEFAULT]
	local _v
	eval "_v=\${CONFIG_$2_$3-}"
	[ -n "$_v" ] || _v="${4-}"
	eval "$1=\$_v"
}
config_get_bool() {  # config_get_bool VAR SECTION OPTION [DEFAULT]
	local _b
	config_get _b "$2" "$3" "${4-}"
	case "$_b" in
		1 | on | true | yes | enabled) _b=1 ;;
		0 | off | false | no | disabled) _b=0 ;;
		*) _b="${4-}" ;;
	esac
	eval "$1=\$_b"
}
config_list_foreach() {  # config_list_foreach SECTION OPTION FUNCTION [ARGS...]
	local _s="$1" _o="$2" _f="$3" _n _i=1 _val
	shift 3
	eval "_n=\${CONFIG_${_s}_${_o}_LENGTH:-0}"
	while [ "$_i" -le "$_n" ]; do
		eval "_val=\$CONFIG_${_s}_${_o}_ITEM$_i"
		"$_f" "$_val" "$@"
		_i=$((_i + 1))
	done
}
config_foreach() {  # config_foreach FUNCTION [TYPE] [ARGS...]
	local _f="$1" _t="${2-}" _s _st
	[ $# -ge 2 ] && shift 2 || shift
	for _s in $CONFIG_SECTIONS; do
		eval "_st=\$CONFIG_${_s}_TYPE"
		[ -z "$_t" ] || [ "$_st" = "$_t" ] || continue
		"$_f" "$_s" "$@"
	done
}
