# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
stage "USB printers (gadgets on dummy_hcd in the VM's kernel)"
# The watchdog's restart ended the session (sessions live in the agent's memory), and the six
# failed sign-ins above locked the account for 2 s: sign in again once the lock has ended. The
# stage also gives the agent's batched warnings (flushed to the card within 60 s) time to reach it.
check "signed in again after the watchdog's restart" signin_retrying
# shellcheck source=../image/usb-stage.sh
. "$repo/scripts/image/usb-stage.sh"
stage_end "USB printers (gadgets on dummy_hcd in the VM's kernel)"
