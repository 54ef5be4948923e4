-- A shop's own tables, written the way the seeds write theirs (../../../shared/seeds is not
-- needed to read this): seed 003's t_order as printed there, and a wallet coupon table in seed
-- 001's style (Chinese status strings, the expiry's due time as epoch milliseconds, and a lock
-- taken for an unpaid order that times out through a second due column). entities.json beside
-- this file maps them; timebucket creates neither (this file is for tests and trials).

CREATE TABLE t_order (
  id BIGINT PRIMARY KEY,
  user_id BIGINT NOT NULL,
  order_no VARCHAR(64) NOT NULL,
  status VARCHAR(32) NOT NULL,
  total_amount DECIMAL(18,2) NOT NULL,
  expire_time DATETIME NOT NULL,
  pay_time DATETIME NULL,
  cancel_time DATETIME NULL,
  cancel_reason VARCHAR(64) NULL,
  version INT NOT NULL DEFAULT 0,
  create_time DATETIME NOT NULL,
  update_time DATETIME NOT NULL,
  UNIQUE KEY uk_order_no (order_no),
  KEY idx_status_expire_id (status, expire_time, id),
  KEY idx_user_create_time (user_id, create_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE user_coupon (
  id BIGINT UNSIGNED PRIMARY KEY,
  user_id BIGINT UNSIGNED NOT NULL,
  coupon_template_id BIGINT NOT NULL,
  status VARCHAR(8) NOT NULL,
  face_value DECIMAL(10,2) NOT NULL,
  expire_at_ms BIGINT NOT NULL,
  lock_expire_time DATETIME(3) NULL,
  lock_order_no VARCHAR(64) NULL,
  update_time DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  KEY idx_status_expire (status, expire_at_ms, id),
  KEY idx_status_lock (status, lock_expire_time, id),
  KEY idx_user_status (user_id, status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
