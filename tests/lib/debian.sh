# shellcheck shell=bash
# Debian archive helpers shared by the packaging tests and the release
# matrix (tests/distro/). No side effects when sourced.

# debian_mirror: the Debian mirror this machine's apt uses (so debootstrap
# reaches the same archive), not its security archive; THPGUARD_DEBIAN_MIRROR
# overrides it. Nothing where apt names none: debootstrap then picks its own
# default, and no archive host is written into the project. Pass it as
# ${mirror:+"$mirror"}.
debian_mirror() {
        local m=${THPGUARD_DEBIAN_MIRROR:-}
        if [ -z "$m" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
                m=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
        fi
        if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
                m=$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list)
        fi
        echo "$m"
}

# debian_mirror_said: the mirror as a message names it.
debian_mirror_said() {
        local m
        m=$(debian_mirror)
        echo "${m:-the default mirror of debootstrap}"
}
