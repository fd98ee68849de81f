bench-guard conc -c 0,1 -P conc -k 1 -n 20000 -t 500
