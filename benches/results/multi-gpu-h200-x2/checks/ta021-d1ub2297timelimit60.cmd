.gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --ub 2297 --time-limit 60 --json --devices 1
