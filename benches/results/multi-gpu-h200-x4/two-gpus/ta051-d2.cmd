.gpu/simtlab flowshop solve ta051 --search resident --pool 65536 --devices 2 --time-limit 20
