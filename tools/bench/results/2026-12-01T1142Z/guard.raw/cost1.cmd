bench-guard cost -c 1 -r 21 -t 100
