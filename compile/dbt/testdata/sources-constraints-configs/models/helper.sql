{{ config(materialized='ephemeral') }}
select 1