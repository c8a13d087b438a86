.gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --devices 4 --ub 2297 --time-limit 60
