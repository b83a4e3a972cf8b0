# unshare_mounts.sh -- sourced by the tests that mount in a mount namespace of
# their own (test_dns.sh, test_output_errors.sh): sets LL_UNSHARE_PROPAGATION,
# the flags `unshare -m` needs here.
#
# unshare makes a new namespace's mounts private by changing the propagation
# of "/", which fails ("cannot change root filesystem propagation: Invalid
# argument") where "/" is not a mount point: a chroot, such as the fresh
# Debian of tools/fresh-machine.sh. There, and only there, the mounts keep
# the propagation they have (--propagation unchanged): a mount the test
# makes may be seen outside the chroot's namespace while it lasts, under
# the chroot's own paths, so each such test unmounts what it mounted
# before it ends.
LL_UNSHARE_PROPAGATION=()
if ! unshare -m true 2>/dev/null && ! mountpoint -q / && unshare -m --propagation unchanged true 2>/dev/null; then
  LL_UNSHARE_PROPAGATION=(--propagation unchanged)
fi
