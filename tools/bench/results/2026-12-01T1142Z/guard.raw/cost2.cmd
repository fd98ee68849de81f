bench-guard cost -T 2 -c 0,1 -r 21 -t 100
