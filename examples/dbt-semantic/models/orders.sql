-- One row per order, with the amount paid for it (0 when unpaid).
with paid as (
    select order_id, sum(amount) / 100.0 as amount
    from {{ ref('raw_payments') }}
    group by order_id
)

select
    o.id as order_id,
    o.user_id as customer_id,
    o.order_date,
    o.status,
    coalesce(paid.amount, 0) as amount
from {{ ref('raw_orders') }} as o
left join paid on paid.order_id = o.id
