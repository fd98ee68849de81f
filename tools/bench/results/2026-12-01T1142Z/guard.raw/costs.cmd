bench-guard cost -c 1 -r 3 -t 30
