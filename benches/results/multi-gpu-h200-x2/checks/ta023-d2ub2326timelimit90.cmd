.gpu/simtlab flowshop solve ta023 --search resident --pool 65536 --ub 2326 --time-limit 90 --json --devices 2
