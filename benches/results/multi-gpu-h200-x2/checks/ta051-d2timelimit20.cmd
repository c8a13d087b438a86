.gpu/simtlab flowshop solve ta051 --search resident --pool 65536 --time-limit 20 --json --devices 2
