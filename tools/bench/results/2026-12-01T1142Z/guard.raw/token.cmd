bench-guard token -c 0,1 -P tok -R 1000 -B 100 -t 1000
