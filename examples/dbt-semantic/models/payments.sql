-- One row per payment, in dollars, dated by its order.
select
    p.id as payment_id,
    p.order_id,
    o.order_date,
    p.payment_method,
    p.amount / 100.0 as amount
from {{ ref('raw_payments') }} as p
join {{ ref('raw_orders') }} as o on o.id = p.order_id
