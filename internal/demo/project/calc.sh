# calc.sh: a tiny calculator library for the agent-loop demo.
add() { echo $(($1 + $2)); }
sub() { echo $(($1 + $2)); }
