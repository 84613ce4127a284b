-- One row per customer, with what their orders and payments add up to.
with customer_orders as (
    select
        user_id as customer_id,
        min(order_date) as first_order,
        max(order_date) as most_recent_order,
        count(*) as number_of_orders
    from {{ ref('raw_orders') }}
    group by user_id
),

customer_payments as (
    select
        o.user_id as customer_id,
        sum(p.amount) / 100.0 as lifetime_value
    from {{ ref('raw_payments') }} as p
    join {{ ref('raw_orders') }} as o on o.id = p.order_id
    group by o.user_id
)

select
    c.id as customer_id,
    c.first_name,
    c.last_name,
    co.first_order,
    co.most_recent_order,
    coalesce(co.number_of_orders, 0) as number_of_orders,
    coalesce(cp.lifetime_value, 0) as lifetime_value
from {{ ref('raw_customers') }} as c
left join customer_orders as co on co.customer_id = c.id
left join customer_payments as cp on cp.customer_id = c.id
