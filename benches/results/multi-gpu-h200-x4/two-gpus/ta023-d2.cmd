.gpu/simtlab flowshop solve ta023 --search resident --pool 65536 --devices 2 --ub 2326 --time-limit 90
