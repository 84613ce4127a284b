SELECT SUM(net) FROM sales.orders WHERE day BETWEEN @start_date AND @end_date
