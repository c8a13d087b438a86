.gpu/simtlab flowshop solve ta023 --search resident --pool 65536 --bound lb1 --ub 2326 --time-limit 200 --json --devices 2
