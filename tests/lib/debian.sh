# shellcheck shell=bash
# Debian archive helpers shared by the packaging tests and the release
# matrix (tests/distro/). No side effects when sourced.

# debian_mirror: the Debian mirror this machine's apt uses (so debootstrap
# reaches the same archive), not its security archive; THPGUARD_DEBIAN_MIRROR overrides it.
debian_mirror() {
        local m=${THPGUARD_DEBIAN_MIRROR:-}
        if [ -z "$m" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
                m=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
        fi
        if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
                m=$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list)
        fi
        echo "${m:-http://deb.debian.org/debian}"
}
