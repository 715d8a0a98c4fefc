#!/usr/bin/env bash
# Which layer of libpartita may include which (docs/library.md, Design):
#   request/ (lifecycle) -> planner/ -> flush/ -> transport/ ; each includes
#   its own layer and the ones below, never one above; the request struct
#   (request/request.h) and the request layer's base headers are shared by all.
# Rules:
#   planner/    planner/, request/settings.h
#   transport/  transport/ (its own folder and transport.h), planner/, and of
#               request/ only the base headers; never flush/; select.c alone
#               names a transport's folder (the registry)
#   flush/      flush/, planner/, transport/transport.h, and of request/ only
#               the base headers (no lifecycle internals: runtime, waiters...)
#   request/    anything but a transport's own folder (transport.h only)
# The public headers (partita/...) may be included anywhere.
# Usage: check_layers.sh SRC_LIB_DIR   (exit 1 and one line per violation)
set -u
dir=${1:?usage: check_layers.sh SRC_LIB_DIR}
base='request/(request|errors|settings|handle_table|clock|nap)\.h'
bad=0
violation() { echo "layers: $1 includes \"$2\": $3"; bad=1; }
while IFS= read -r file; do
  rel=${file#"$dir"/}
  layer=${rel%%/*}
  sub=${rel#transport/}; sub=${sub%%/*} # transport/<impl>/...: impl
  while IFS= read -r inc; do
    [[ $inc =~ ^partita/ ]] && continue # the public headers (include/partita) are everyone's
    case $layer in
    planner)
      [[ $inc =~ ^(planner/|request/settings\.h$) ]] || violation "$rel" "$inc" "planner/ includes only planner/ and request/settings.h" ;;
    transport)
      if [[ $inc =~ ^flush/ ]]; then
        violation "$rel" "$inc" "the transport is below the flush layer"
      elif [[ $inc =~ ^request/ && ! $inc =~ ^$base$ ]]; then
        violation "$rel" "$inc" "the transport sees only the request struct and base headers of request/"
      elif [[ $inc =~ ^transport/([^/]+)/ ]]; then
        impl=${BASH_REMATCH[1]}
        if [[ $rel != transport/select.c && ( $rel != transport/*/* || $impl != "$sub" ) ]]; then
          violation "$rel" "$inc" "only select.c and the transport's own files include its folder"
        fi
      fi ;;
    flush)
      if [[ $inc =~ ^transport/ && $inc != transport/transport.h ]]; then
        violation "$rel" "$inc" "flush/ reaches transports only through transport/transport.h"
      elif [[ $inc =~ ^request/ && ! $inc =~ ^($base|request/request_list\.h)$ ]]; then
        violation "$rel" "$inc" "flush/ sees only the request struct and base headers of request/"
      fi ;;
    request)
      [[ $inc =~ ^transport/ && $inc != transport/transport.h ]] &&
        violation "$rel" "$inc" "the lifecycle reaches transports only through transport/transport.h" ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find "$dir/request" "$dir/planner" "$dir/flush" "$dir/transport" -name '*.[ch]' 2>/dev/null | sort)
[ -d "$dir/transport" ] || { echo "layers: no transport/ folder under $dir"; bad=1; }
exit $bad
