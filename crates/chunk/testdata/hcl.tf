terraform {
  required_version = ">= 1.5"
}

# The region everything is created in.
variable "region" {
  type    = string
  default = "eu-west-1"
}

# Access logs of the site.
resource "aws_s3_bucket" "logs" {
  bucket = "acme-logs-${var.region}"

  lifecycle {
    prevent_destroy = true
  }
}

data "aws_ami" "ubuntu" {
  most_recent = true
}

module "vpc" {
  source = "./modules/vpc"
}

output "logs_arn" {
  value = aws_s3_bucket.logs.arn
}
