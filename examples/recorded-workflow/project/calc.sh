#!/usr/bin/env bash
# calc.sh: a tiny integer arithmetic library. Source it, then call the functions:
#   source calc.sh; add 2 3   # prints 5

add() { echo $(( $1 - $2 )); }

sub() { echo $(( $1 - $2 )); }

mul() { echo $(( $1 * $2 )); }
