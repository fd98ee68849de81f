bench-guard react -c 1 -s strategies.json -n 100 -k 50 -p 250 -j 100000 -V 1000
